"""A rule-based customer: `--user customer:reply` (docs/conversations.md)."""


def reply(user, history):
    if not history:  # the opening message
        return user.goal
    if "Shall I" in history[-1]["content"]:
        return "yes, please"
    return f"Thanks! {user.stop}"  # the stop phrase ends the conversation
