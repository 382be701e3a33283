"""loggp experiments part."""
