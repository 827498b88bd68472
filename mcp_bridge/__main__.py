"""`python -m mcp_bridge`: the same as the `exograph-mcp` console script."""

from mcp_bridge.stdio import main

raise SystemExit(main())
