"""`python -m npc_mind.llm`: serve a local model for any game (see `npc_mind.llm.local_server`)."""

import sys

from npc_mind.llm.local_server import main

sys.exit(main())
