"""`python -m signet` runs the CLI."""

from signet.cli.main import main

if __name__ == "__main__":
    main()
