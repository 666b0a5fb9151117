"""fathom.chat"""
