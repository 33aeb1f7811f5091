"""The runner the audit checklists share: each check is a function whose docstring says
the behaviour a user should get and which returns True where it holds."""


def run(checks, names):
    """Run ``checks`` (those named in ``names``, or all when it is empty), printing each
    one's docstring, its own figures and PASS or FAIL; return the number of failures."""
    failures = 0
    for check in checks:
        if names and check.__name__ not in names:
            continue
        print(f"{check.__name__}: {check.__doc__}")
        ok = check()
        failures += not ok
        print(f"  -> {'PASS' if ok else 'FAIL'}")
    return failures
