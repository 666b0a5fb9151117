"""fathom.tools"""
