#!/bin/sh
# change_model: a jp tool that switches the conversation to another model.
# It proposes {"assistant":{"model":{"id": MODEL}}}; jp applies that only as
# far as the tool's access.config grants allow (see docs/tool-protocol.md).
#
# It parses no JSON in general. jp refuses calls whose arguments do not fit
# the declared parameters, so `tool.arguments` is exactly {"model": "..."},
# and a model is taken only if it is made of the characters a model id uses
# (no quote, no backslash), so nothing needs unescaping and what the tool
# writes back is always valid JSON. Anything else is an error outcome.
#
# It has no side effects, so running it again for the same call (jp does,
# after rejecting a change) is harmless.

# The request is one JSON document; a raw line break in it is only
# whitespace, so the whole of it fits on one line.
request=$(tr '\n\r\t' '   ')
id='[A-Za-z0-9._:/@+-]'

# The string that follows `"key": ...` at the given place, if it is made
# of model-id characters only.
pick() {
    printf '%s\n' "$request" | sed -n "s|.*$1 *\"\\($id\\{1,\\}\\)\".*|\\1|p"
}

model=$(pick '[{,] *"arguments" *: *{ *"model" *:')
case $model in
'')
    echo '{"type":"error","message":"`model` must be a model alias (such as `opus`) or provider/name (such as `anthropic/claude-opus-5`)."}'
    exit 0
    ;;
esac

# Set when jp rejected the change this call proposed on its previous run.
if printf '%s\n' "$request" | grep -q '[{,] *"delta_rejection" *:'; then
    reason=$(printf '%s\n' "$request" |
        sed -n 's|.*[{,] *"delta_rejection" *: *{.*"reason" *: *"\([a-z_]\{1,\}\)".*|\1|p')
    case $reason in
    user_rejected) why='the user declined the switch' ;;
    confirmation_unavailable) why='the switch needs confirmation from the user, and no one could be asked' ;;
    unauthorized_paths) why='this tool is not allowed to change assistant.model.id here' ;;
    invalid_config) why="\`$model\` is not a model jp knows (neither an alias nor provider/name)" ;;
    *) why='jp did not apply it' ;;
    esac
    printf '{"type":"success","content":"The model was not switched to %s: %s. Carry on with the current model."}\n' \
        "$model" "$why"
    exit 0
fi

# The model now in use, read through the grant, for the message.
current=$(pick '[{,] *"config" *: *{ *"assistant" *: *{ *"model" *: *{ *"id" *:')
from=${current:+ from $current}
printf '{"type":"success","content":"Switched%s to %s.","config":{"assistant":{"model":{"id":"%s"}}}}\n' \
    "$from" "$model" "$model"
