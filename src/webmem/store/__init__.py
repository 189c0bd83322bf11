"""Storage core: the engine, the schema and the migrations."""

from .engine import DB_FILE, Store
from .migrations import MIGRATIONS, MigrationState, apply_migrations, migration_states

__all__ = ["DB_FILE", "MIGRATIONS", "MigrationState", "Store", "apply_migrations", "migration_states"]
