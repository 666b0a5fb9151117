"""fathom.testing"""
