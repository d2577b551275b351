"""A backend plugin whose entry point raises on import, as a plugin with a missing native
library would."""
