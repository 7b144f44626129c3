"""Ready-made studies: beam-on-beam, cantilever with contact, blade-damper-blade."""
