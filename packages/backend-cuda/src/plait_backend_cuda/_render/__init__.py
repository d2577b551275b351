"""The shared kernel renderer (plait-backend-xpu's ``render*.py`` and ``pointwise.py``), copied
into this wheel by the build: one source renders both backends' kernels."""
