"""Provider traffic: recorded fixtures, the replay server, the recording proxy, cassettes and
the pytest plugin (``h9``) that serves them to a user's tests."""
