"""fathom.llm"""
