# cmake -DINPUT=file -DOUTPUT=file.inc -P embed_text.cmake
# Writes INPUT's text as one C++ raw string literal (for sources that must also be pasted into
# generated code), touching OUTPUT only when the text changed.
file(READ "${INPUT}" TEXT)
file(WRITE "${OUTPUT}.tmp" "R\"TXLA_EMBED(${TEXT})TXLA_EMBED\"\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
