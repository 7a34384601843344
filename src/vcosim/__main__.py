from vcosim.cli import main

main()
