from chat.main import main

main()
