import sys

from reviewer.cli import main

if __name__ == "__main__":  # importing this module (a web route naming it, say) runs nothing
    sys.exit(main())
