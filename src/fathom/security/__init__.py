"""fathom.security"""
