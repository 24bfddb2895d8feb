"""pecs golden vectors: field tables, the generator, the JSON->C converter and lint."""
