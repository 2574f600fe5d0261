"""Provider logic for the ChatGPT and Gemini web UIs.

The modules here are pure where they can be (see ``completion``): they are fed page observations and
answer what the page is doing; the drivers that own CDP calls, timers and tabs live elsewhere.
"""
