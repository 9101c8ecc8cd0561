from fdpkit.cli import main

main()
