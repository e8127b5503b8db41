"""Welivita & Pu (2024): are LLM replies to EmpatheticDialogues prompts rated more empathetic than humans'?"""
