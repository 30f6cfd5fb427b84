"""API: the wire format (``wire``) and the HTTP routes (``routes``) over the earlier stages."""
