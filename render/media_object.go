package render

import "github.com/aviary-dev/aviary/storage"

// MediaObject renders media m with fields f, as a post's includes show it
// (used by the direct message lookups' attachments.media_keys expansion).
func MediaObject(m storage.Media, f FieldSet) Media { return renderMedia(m, f) }
