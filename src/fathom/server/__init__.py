"""fathom.server"""
