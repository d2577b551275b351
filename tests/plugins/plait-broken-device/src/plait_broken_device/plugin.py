"""Fails the way real plugins fail: an import of a shared library that is not there."""

raise ImportError("libbroken.so.1: cannot open shared object file: No such file or directory")
