"""fathom.workflow"""
