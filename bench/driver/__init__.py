"""weft's benchmark driver: `./weft bench` (see cli.py).  Standard library + matplotlib."""
