"""fathom.store"""
