"""Third-party code shipped inside expert (see README.md beside this file)."""
