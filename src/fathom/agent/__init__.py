"""fathom.agent"""
