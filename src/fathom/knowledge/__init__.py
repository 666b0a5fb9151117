"""fathom.knowledge"""
