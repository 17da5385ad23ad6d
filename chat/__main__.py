from chat.main import main

raise SystemExit(main())
