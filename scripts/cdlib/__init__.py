"""Library behind scripts/compile_debug.py. Nothing at module level imports torch."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KNOWLEDGE_DIR = os.path.join(ROOT, "knowledge")
EXAMPLES_DIR = os.path.join(ROOT, "examples")
