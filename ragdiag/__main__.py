import sys

from .cli.parser import main

sys.exit(main())
