"""Play against the agents: a web table (``python -m arena.play --web``) and a terminal table
(``python -m arena.play``), both refereed by :class:`arena.play.table.Table`.

``arena.play.table``    the table: hands, seats, seeds, the person's screen as JSON-ready data
``arena.play.server``   the FastAPI app: the page, sessions, tables over WebSocket, replays, PHH
``arena.play.terminal`` the same table drawn in text
``arena.play.static``   the page (plain HTML, CSS, JavaScript)
"""
