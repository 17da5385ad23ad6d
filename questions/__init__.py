"""Reading a question against a graph's schema: what kind of thing it asks for, the names it gives, the
schema routes between them, and a neighbourhood written as facts. Pure functions; looking the names up in
the graph belongs in backends/grounding.py."""
