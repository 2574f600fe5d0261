"""The application: the Bridge facade, jobs, the runtime that wires everything, the launcher."""
