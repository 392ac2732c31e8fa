"""Built-in agents and the tasks they run: the gold agent, IRMA, scripted conversations.
"""
