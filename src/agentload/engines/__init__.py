"""Local engines the tool can start: llama.cpp with a generated or packaged model."""
