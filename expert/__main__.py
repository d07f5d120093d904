from .interfaces.cli.main import run

run()
