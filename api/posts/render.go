package posts

type createResponse struct {
	Data createdPost `json:"data"`
}

type createdPost struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type deleteResponse struct {
	Data deleted `json:"data"`
}

type deleted struct {
	Deleted bool `json:"deleted"`
}
