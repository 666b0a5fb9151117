"""fathom.sandbox"""
