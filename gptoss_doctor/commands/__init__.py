"""One module per command group; each exposes ``register(app)``.

Importing a command module must stay cheap: heavy work is imported inside the
command function.
"""

from __future__ import annotations


def COMMAND_MODULES():  # noqa: N802 - a constant-like registry
    from gptoss_doctor.commands import explain, kb

    registers = [explain.register, kb.register]
    # check and fix-config register themselves here once present
    try:
        from gptoss_doctor.commands import check
        registers.append(check.register)
    except ImportError:
        pass
    try:
        from gptoss_doctor.commands import fixconfig
        registers.append(fixconfig.register)
    except ImportError:
        pass
    return registers
