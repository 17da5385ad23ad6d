from bridge.main import main

main()
