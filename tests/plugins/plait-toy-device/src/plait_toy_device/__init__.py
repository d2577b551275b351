"""A made-up ``toy`` device for Plait's plugin tests, written the way a vendor would.

``plugin`` is the light entry point (no numpy, no torch at module level); ``_runtime`` plays
the part of the native extension and is imported on the first use of the device. Its memory is
numpy arrays that core cannot see into, so every host<->device transfer goes through the copier.
"""
