"""Executable companion to MASC and PCGrad/SAGO."""
__version__ = "0.1.0"
