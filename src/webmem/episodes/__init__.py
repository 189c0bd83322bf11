"""Episodes: graded steps across repetitions of one task, turned into REPEAT/AVOID advice.

``EpisodeStore`` (``store``) records steps with the page before and after, applies grades and
retrieves the memories that fit a page; ``export`` renders them as JSON, CSV or prompt text;
``aria`` reads page elements from snapshots.
"""

from ..core.embeddings import Embedder, HashingEmbedder, SentenceTransformerEmbedder
from .export import export_memories
from .store import Episode, EpisodeStore

__all__ = ["Embedder", "Episode", "EpisodeStore", "HashingEmbedder", "SentenceTransformerEmbedder", "export_memories"]
