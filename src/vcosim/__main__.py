from vcosim.app import main

main()
