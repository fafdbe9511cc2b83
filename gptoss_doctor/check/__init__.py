"""``check``: probe running servers. One stage per module, in pipeline order:

- ``targets``: the URLs as typed → base URLs
- ``discover``: reachability, engine (asks ``gptoss_doctor.engines``), version, models, stop tokens, tokenizer
- ``probes``: the small behavioural requests (chat, tools, streaming, Responses, metrics, structured output)
- ``judge``: observations → findings with statuses and the doctor's own fixes
- ``link``: findings → knowledge-base entries, references, best fix
- ``report``: the JSON payload, headings and the Markdown report
- ``run``: the pipeline per target and across targets; ``result``: the typed results

Importing this package is cheap (the knowledge base imports ``finding_ids``); the stages import what they need.
"""
