"""JSON machinery: streamed arrays (:mod:`.array`), small documents that keep every object's
position (:mod:`.document`) and many fields of many records at once (:mod:`.fields`)."""
