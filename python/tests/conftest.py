"""pytest configuration of the charkit Python tests: puts this folder on sys.path
so that the test modules can import _helpers (the shared helpers)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
