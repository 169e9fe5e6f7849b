from sepia.cli import app

app()
